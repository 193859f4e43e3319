"""Text for the language model: sentences (`sentences`), the language of a text (`language`), the
word tokenizer of our own models, plexity-tok-1 (`plexity_tokenizer`), the tokenizer each model
declares (`model_tokenizers`) and CCNet's normaliser for CCNet models (`ccnet_normalizer`)."""
