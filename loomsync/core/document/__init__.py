"""The thread document as both sides read and write it: model, ids, JSON text, codec, patch."""
