"""loomsync: keep, sync and search the conversations of AI coding agents."""

from loomsync.ids import InvalidThreadId, ThreadId
from loomsync.model import AgentState, Conversation, Message, Metadata, Thread, ToolCall

__version__ = "0.1.0"

__all__ = [
    "AgentState",
    "Conversation",
    "InvalidThreadId",
    "Message",
    "Metadata",
    "Thread",
    "ThreadId",
    "ToolCall",
    "__version__",
]
