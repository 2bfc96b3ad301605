"""The only Streamlit-aware code: controls and their URL mirror, cached calls, page helpers."""
