"""Front end: text -> statements (lexer) -> shape-cached pyparsing trees (grammar)."""
