"""Context building: the history levels sent to the model within a token budget."""
