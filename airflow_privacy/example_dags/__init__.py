"""Example DAGs shipped with the provider (copy one into your DAGs folder, or import it)."""
