"""The ground floor: what every other package may use and nothing here imports from them.

The registry of papers, atomic artefacts (tables, arrays, JSON, figures), the machine checks, the
claims framework and errata, progress records, the shared params schema types with the loader
and its error format, diverged models out of tables, and the project files a script runs (its
code dependencies).
"""
