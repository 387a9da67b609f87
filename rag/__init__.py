"""What answers a question, below the nodes that call it: the run's context and state, settings, retrieval,
planning, the reader, knowledge over passages, and the answer's readings and decision. Holds nothing itself."""
