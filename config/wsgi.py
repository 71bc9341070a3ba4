import gc
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")
application = get_wsgi_application()

# Everything imported so far lives for the whole process: keep it out of the garbage
# collector's generations so full collections stay short under load (queue ranking p95).
gc.freeze()
