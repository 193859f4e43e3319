"""Scoring sentences with a KenLM model: the models (`models`), the scorer (`scorer`), the
per-sentence methods that choose what to keep (`methods`) and one model per language (`multilingual`)."""
