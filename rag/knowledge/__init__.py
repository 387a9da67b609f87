"""CRAG knowledge handling over passages, no graph needed: passages, knowledge strips, coverage selection,
evidence and citations."""
