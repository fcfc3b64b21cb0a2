"""The core every other part builds on: the events, the pure reducer that folds them into state,
the statistics, the load-level rules and every derived figure. It imports nothing else of the
package and no I/O library."""
