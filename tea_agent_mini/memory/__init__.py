"""Long-term memory: extraction, storage, selection and the embedders behind semantic search."""
