"""The framework-inclusion tracker's ingesters: land raw records into the DuckDB warehouse.

Data flows sources → ``raw`` (this package) → dbt staging → intermediate → marts → release.
"""

__version__ = "0.1.0"
