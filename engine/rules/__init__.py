"""The rule language: model, loading, conditions, templates, compiling onto durable_rules,
evaluation, lint.
"""
