"""Every derived figure, computed once: the live state, the report, export, compare and the
``--json`` lines read them from here and only format them."""
