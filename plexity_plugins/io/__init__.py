"""Bytes in and out: reading WARC records and document files (`inputs`), decoding HTML bytes to text
(`decoding`), writing WARC records (`warc_writer`) and files that appear only when whole (`atomic_files`)."""
