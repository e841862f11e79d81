"""Tests for text cleaning, result budgets and quota counting."""
