"""What every stage shares: the params schema and profiles, the stage runner, artefacts written
atomically and byte-stable (tables, arrays, JSON, figures, claims tables), and diverged models
kept out of fits, claims and figures.
"""
