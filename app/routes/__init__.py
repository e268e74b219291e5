"""HTTP routes, one router per resource (the dashboard's router lives in `app/dashboard/routes.py`)."""
