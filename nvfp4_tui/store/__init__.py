"""Snapshots on disk: the writer, the reader and tail, the schema, the manifest, the legacy importer."""
