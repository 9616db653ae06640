"""The one error type of the data layer: a bad file, entry, parameter, download or cache."""


class DatasetError(ValueError):
    """A data set could not be resolved, read, generated or fetched; the message says which and why."""
