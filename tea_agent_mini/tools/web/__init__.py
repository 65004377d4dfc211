"""The web: toolkit_web_fetch (fetch: netguard refuses private addresses, htmltext turns HTML
into text) and toolkit_search (search: DuckDuckGo's HTML endpoint)."""
