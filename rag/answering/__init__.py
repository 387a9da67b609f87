"""The answer step's parts, no graph needed: readings gather candidate answers from what earlier stages left in
state, one calibrated model gives each its probability of being right, and the best one is answered when that
probability reaches the run's `answer_threshold`."""

from rag.answering.candidates import Candidate
from rag.answering.decision import DecisionModel, DecisionWeightsError, load_decision

__all__ = ["Candidate", "DecisionModel", "DecisionWeightsError", "load_decision"]
