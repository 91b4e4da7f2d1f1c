"""What every stage shares: the params schema and profiles, the stage runner, and artefacts
written atomically and byte-stable (tables, arrays, JSON, figures, claims tables).
"""
