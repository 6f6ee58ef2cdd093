"""The pool's history and the page that shows it (a CondorView for htcd): docs/view.md."""
