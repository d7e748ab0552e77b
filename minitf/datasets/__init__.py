"""Small datasets for the course: Iris (shipped) and MNIST (IDX files, cached downloads)."""
