"""Turning thread text into safe HTML: Markdown (markdown-it-py) sanitized by nh3, code
highlighted by Pygments with CSS classes, tool calls and outputs as collapsed boxes, long text
cut to a preview. Nothing here reads the database or knows about requests."""
