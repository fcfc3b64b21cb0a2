"""Snapshots on disk: writer, reader, follower, replayer, exporters, legacy importer."""
