"""Lessons: the story of stragglers and staleness, one step at a time (DESIGN §14)."""

from distsgd.ui import lessons

lessons.show()
