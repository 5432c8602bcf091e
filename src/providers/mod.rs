//! Tools for LLM providers.
