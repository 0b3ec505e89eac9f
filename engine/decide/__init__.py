"""The decision: the phases of a recommendation, candidates, owning vs renting, the pick, the
Decision type.
"""
