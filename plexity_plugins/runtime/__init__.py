"""What the package needs of the machine it runs on: the compiled helpers (`native`), optional
packages (`extras`) and the life of child processes (`lifetime`).  Imports nothing else of the package."""
