//! The API model and renderers.
