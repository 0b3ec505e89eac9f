"""The team's answers: the questions, loading and checking answers, the questionnaire."""
