"""What the package needs of the machine it runs on: the compiled helpers (`native`), optional
packages (`extras`), the life of child processes (`lifetime`) and names imported on first use (`lazy`).
Imports nothing else of the package."""
