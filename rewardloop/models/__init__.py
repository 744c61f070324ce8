"""Model backends behind one small interface: builtin (offline), OpenAI-compatible, Gemini, Anthropic."""
