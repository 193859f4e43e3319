"""Settings of the example project: a crawl whose pages are cleaned by the perplexity filter."""

BOT_NAME = "plexity_example"
SPIDER_MODULES = ["plexity_example.spiders"]
NEWSPIDER_MODULE = "plexity_example.spiders"

ROBOTSTXT_OBEY = True
CONCURRENT_REQUESTS_PER_DOMAIN = 4
DOWNLOAD_DELAY = 0
FEED_EXPORT_ENCODING = "utf-8"
LOG_LEVEL = "INFO"

# The one line that adds perplexity filtering: every item's "html" gets a cleaned "text".
# (Scrapy >= 2.11's add-on; it enables the pipeline at PLEXITY_PIPELINE_PRIORITY, 300. The
# same without add-ons: ITEM_PIPELINES = {"plexity_plugins.scrapy.PerplexityFilterPipeline": 300})
ADDONS = {"plexity_plugins.scrapy.PlexityAddon": 0}

# Every visible line of the page goes to the filter, which keeps the article (the
# best-scoring runs of blocks: method "regions").  The default, "learned" (a small forest of
# decision trees that picks the page's text blocks, as `plexity clean` does), extracts the
# main text first and the filter only trims its edges (method "trim").
PLEXITY_EXTRACTOR = "tags"

# Everything below is optional; these are the defaults.
# PLEXITY_MODEL = None              # embedded default model; or a name / a path
# PLEXITY_THRESHOLD = None          # the model's calibrated default for the method
# PLEXITY_METHOD = None             # "regions", "region", "trim" or "sentences"; None: by extractor
# PLEXITY_INPUT_FIELD = "html"
# PLEXITY_INPUT_FORMAT = "html"     # or "text"
# PLEXITY_ENCODING_FIELD = "encoding"  # for a page given as bytes: its Content-Type (or response.encoding)
# PLEXITY_OUTPUT_FIELD = "text"
# PLEXITY_STATS_FIELD = "plexity"   # per-item plexity_* fields (as datatrove's metadata); "" for none
# PLEXITY_ANNOTATE = False          # True: mark would-be-dropped sentences instead
# PLEXITY_MIN_CHARS = 50            # items keeping less text are dropped ("too_short")
# PLEXITY_MIN_KEPT_FRACTION = 0.0   # items keeping a smaller share of their text are dropped
# PLEXITY_OTHER_LANGUAGES = "keep"  # or "drop": pages in another language than the model's
# PLEXITY_LANGUAGE_CHECK = True     # pages in another language pass through unfiltered
# PLEXITY_THREADS = 1               # worker threads for extraction and scoring (2 on 2+ cores: faster)
# PLEXITY_DROPPED_FILE = None       # e.g. "plexity-dropped.jsonl": every dropped sentence/item

# Writes the crawl's stats (plexity/* included) as JSON when the crawl ends, if set.
EXTENSIONS = {"plexity_example.extensions.JsonStatsDump": 500}
# STATS_JSON_FILE = "stats.json"
