"""Array API functions, one module per spec category."""
