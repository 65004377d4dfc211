"""Development: toolkit_format_code (formatting), toolkit_code_review (codereview, pyreview),
toolkit_run_tests (testrun), toolkit_build and toolkit_read_pyproject (project),
toolkit_release_version (release); tomlreader reads pyproject.toml on Python 3.10."""
