"""htcd's built-in plugins, registered through the ``htcd`` entry-point group like any other."""
