"""Renderers: kernel plans -> shader source. Renderers never touch a device."""
