"""Bytes in and out: reading WARC records (`warc_files`, through `warc_iterator`, `record_headers`, `warc_resync`,
`http_codings`) and document files (`document_files`), opening an input and telling what it is (`input_files`,
`payload_sniffing`) within the caps (`read_limits`), by named outcomes (`read_outcomes`); `inputs`, where all of the
reading was, still hands out each of its names.  Decoding HTML bytes to text (`decoding`), writing WARC records
(`warc_writer`) and files that appear only when whole (`atomic_files`)."""
