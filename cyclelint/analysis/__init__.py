"""Facts shared by the rules, computed in the single pass over each file."""
