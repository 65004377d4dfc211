"""Dates: toolkit_date_diff and toolkit_date_add (dates), toolkit_lunar (lunar, on the tables
in lunar_data)."""
