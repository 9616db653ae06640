"""Profiles: tables and figures of the papers from result rows."""
