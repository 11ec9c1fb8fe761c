"""labelwise: label-efficient evaluation of ML systems."""
