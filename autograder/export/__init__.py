"""Export stage: builds what leaves the instructor's machine (release bundles, worked solutions)."""
