"""The Textual app. It receives its sources and never builds them."""
