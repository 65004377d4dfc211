"""Git: toolkit_git and toolkit_git_commit (git); gitsafe runs read-only git without any of
the repository's own programs (hooks, filters, pagers, fsmonitor)."""
