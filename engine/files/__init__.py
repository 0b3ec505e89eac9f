"""Reading and writing files safely: bounded YAML/JSON, validation messages, private files, the
policy cache.
"""
