"""The docs' own tooling, kept in the checkout and not installed with oslr: `tables` renders the
generated tables of docs/*.md from the files under docs/figures (`oslr reproduce --tables docs`
loads it from the checkout the docs belong to)."""
