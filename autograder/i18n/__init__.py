"""Language tooling: the glossary lint (:mod:`autograder.i18n.glossary`)."""
