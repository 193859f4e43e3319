"""An article page with navigation, a header and a footer: what a main-content extractor keeps of it
is the article's lines (the fast and auto extractor tests)."""

ARTICLE = ["The city council approved the budget for the new library on Tuesday after a long debate.",
           "The library will open in the spring and will stay open late on weekdays, the mayor said.",
           "Residents asked about the road to the river, and the council promised to finish it this year."]
PAGE = ("<html><head><title>Library</title><script>var x = 1;</script></head><body>"
        "<header><nav><ul><li><a href='/'>Home</a></li><li><a href='/news'>News</a></li>"
        "<li><a href='/sport'>Sport</a></li></ul></nav></header>"
        "<main><article><h1>Council approves library budget</h1>"
        + "".join(f"<p>{line}</p>" for line in ARTICLE)
        + "</article></main><footer><p>© 2024 Example News</p><a href='/privacy'>Privacy</a></footer>"
        "</body></html>")
