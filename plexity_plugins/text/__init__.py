"""Text for the language model: sentences (`sentences`), the language of a text (`language`), the
word tokenizer of our own models, plexity-tok-1 (`plexity_tokenizer`), the tokenizer each model
declares (`model_tokenizers`), CCNet's normaliser for CCNet models (`ccnet_normalizer`) and text cut short
at a character's boundary (`graphemes`)."""
